worker_processes 2
listen "127.0.0.1:37629"
working_directory "/tmp/acceptlab-peer-unicorn-default-vcmkxw4b"
pid "/tmp/acceptlab-peer-unicorn-default-vcmkxw4b/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-vcmkxw4b/error.log"
