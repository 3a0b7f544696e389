worker_processes 2
listen "127.0.0.1:35265"
working_directory "/tmp/acceptlab-peer-unicorn-default-jyh7n84l"
pid "/tmp/acceptlab-peer-unicorn-default-jyh7n84l/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-jyh7n84l/error.log"
