worker_processes 2
listen "127.0.0.1:60045"
working_directory "/tmp/acceptlab-peer-unicorn-default-3bgd5vre"
pid "/tmp/acceptlab-peer-unicorn-default-3bgd5vre/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-3bgd5vre/error.log"
