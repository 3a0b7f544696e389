worker_processes 2
listen "127.0.0.1:34489"
working_directory "/tmp/acceptlab-peer-unicorn-default-j4tr1iln"
pid "/tmp/acceptlab-peer-unicorn-default-j4tr1iln/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-j4tr1iln/error.log"
