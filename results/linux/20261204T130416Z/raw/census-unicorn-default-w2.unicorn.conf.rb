worker_processes 2
listen "127.0.0.1:42805"
working_directory "/tmp/acceptlab-peer-unicorn-default-5k1f0aq2"
pid "/tmp/acceptlab-peer-unicorn-default-5k1f0aq2/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-5k1f0aq2/error.log"
