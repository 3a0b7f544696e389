worker_processes 2
listen "127.0.0.1:52807"
working_directory "/tmp/acceptlab-peer-unicorn-default-9v4qudfq"
pid "/tmp/acceptlab-peer-unicorn-default-9v4qudfq/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-9v4qudfq/error.log"
