worker_processes 2
listen "127.0.0.1:33093"
working_directory "/tmp/acceptlab-peer-unicorn-default-xbo566_p"
pid "/tmp/acceptlab-peer-unicorn-default-xbo566_p/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-xbo566_p/error.log"
