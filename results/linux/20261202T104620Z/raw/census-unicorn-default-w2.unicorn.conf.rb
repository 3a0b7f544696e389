worker_processes 2
listen "127.0.0.1:37179"
working_directory "/tmp/acceptlab-peer-unicorn-default-qnk907bk"
pid "/tmp/acceptlab-peer-unicorn-default-qnk907bk/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-qnk907bk/error.log"
