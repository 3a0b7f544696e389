worker_processes 2
listen "127.0.0.1:56047"
working_directory "/tmp/acceptlab-peer-unicorn-default-g657xis0"
pid "/tmp/acceptlab-peer-unicorn-default-g657xis0/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-g657xis0/error.log"
