worker_processes 2
listen "127.0.0.1:44971"
working_directory "/tmp/acceptlab-peer-unicorn-default-4ty3i745"
pid "/tmp/acceptlab-peer-unicorn-default-4ty3i745/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-4ty3i745/error.log"
