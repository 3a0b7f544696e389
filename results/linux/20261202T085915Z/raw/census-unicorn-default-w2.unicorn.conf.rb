worker_processes 2
listen "127.0.0.1:44301"
working_directory "/tmp/acceptlab-peer-unicorn-default-3aab44zu"
pid "/tmp/acceptlab-peer-unicorn-default-3aab44zu/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-3aab44zu/error.log"
