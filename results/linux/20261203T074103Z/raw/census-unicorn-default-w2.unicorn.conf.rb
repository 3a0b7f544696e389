worker_processes 2
listen "127.0.0.1:50481"
working_directory "/tmp/acceptlab-peer-unicorn-default-movmmzir"
pid "/tmp/acceptlab-peer-unicorn-default-movmmzir/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-movmmzir/error.log"
