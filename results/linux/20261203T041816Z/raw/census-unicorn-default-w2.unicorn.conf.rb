worker_processes 2
listen "127.0.0.1:43105"
working_directory "/tmp/acceptlab-peer-unicorn-default-nk7z5f5d"
pid "/tmp/acceptlab-peer-unicorn-default-nk7z5f5d/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-nk7z5f5d/error.log"
