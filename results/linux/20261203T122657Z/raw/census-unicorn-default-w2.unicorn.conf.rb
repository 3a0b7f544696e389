worker_processes 2
listen "127.0.0.1:53129"
working_directory "/tmp/acceptlab-peer-unicorn-default-itmqx59c"
pid "/tmp/acceptlab-peer-unicorn-default-itmqx59c/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-itmqx59c/error.log"
