worker_processes 2
listen "127.0.0.1:60553"
working_directory "/tmp/acceptlab-peer-unicorn-default-kmfclneq"
pid "/tmp/acceptlab-peer-unicorn-default-kmfclneq/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-kmfclneq/error.log"
