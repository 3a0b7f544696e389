worker_processes 2
listen "127.0.0.1:55669"
working_directory "/tmp/acceptlab-peer-unicorn-default-kzioi8et"
pid "/tmp/acceptlab-peer-unicorn-default-kzioi8et/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-kzioi8et/error.log"
