worker_processes 2
listen "127.0.0.1:56849"
working_directory "/tmp/acceptlab-peer-unicorn-default-uu7csqs0"
pid "/tmp/acceptlab-peer-unicorn-default-uu7csqs0/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-uu7csqs0/error.log"
