worker_processes 2
listen "127.0.0.1:53389"
working_directory "/tmp/acceptlab-peer-unicorn-default-71108twe"
pid "/tmp/acceptlab-peer-unicorn-default-71108twe/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-71108twe/error.log"
