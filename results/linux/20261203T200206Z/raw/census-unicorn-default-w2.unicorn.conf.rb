worker_processes 2
listen "127.0.0.1:58207"
working_directory "/tmp/acceptlab-peer-unicorn-default-j42raeoy"
pid "/tmp/acceptlab-peer-unicorn-default-j42raeoy/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-j42raeoy/error.log"
