worker_processes 2
listen "127.0.0.1:57403"
working_directory "/tmp/acceptlab-peer-unicorn-default-68p56jc7"
pid "/tmp/acceptlab-peer-unicorn-default-68p56jc7/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-68p56jc7/error.log"
