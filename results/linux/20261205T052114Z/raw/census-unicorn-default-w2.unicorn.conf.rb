worker_processes 2
listen "127.0.0.1:56049"
working_directory "/tmp/acceptlab-peer-unicorn-default-3m1qwwc3"
pid "/tmp/acceptlab-peer-unicorn-default-3m1qwwc3/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-3m1qwwc3/error.log"
