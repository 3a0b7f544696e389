worker_processes 2
listen "127.0.0.1:49451"
working_directory "/tmp/acceptlab-peer-unicorn-default-k3ay7836"
pid "/tmp/acceptlab-peer-unicorn-default-k3ay7836/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-k3ay7836/error.log"
