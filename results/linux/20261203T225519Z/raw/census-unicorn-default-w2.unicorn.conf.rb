worker_processes 2
listen "127.0.0.1:49273"
working_directory "/tmp/acceptlab-peer-unicorn-default-n3ov9rou"
pid "/tmp/acceptlab-peer-unicorn-default-n3ov9rou/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-n3ov9rou/error.log"
