worker_processes 2
listen "127.0.0.1:35629"
working_directory "/tmp/acceptlab-peer-unicorn-default-d5bmf9w2"
pid "/tmp/acceptlab-peer-unicorn-default-d5bmf9w2/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-d5bmf9w2/error.log"
