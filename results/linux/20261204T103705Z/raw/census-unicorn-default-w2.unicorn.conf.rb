worker_processes 2
listen "127.0.0.1:36499"
working_directory "/tmp/acceptlab-peer-unicorn-default-8wpe5ay0"
pid "/tmp/acceptlab-peer-unicorn-default-8wpe5ay0/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-8wpe5ay0/error.log"
