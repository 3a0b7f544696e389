worker_processes 2
listen "127.0.0.1:58019"
working_directory "/tmp/acceptlab-peer-unicorn-default-1qr3lwd8"
pid "/tmp/acceptlab-peer-unicorn-default-1qr3lwd8/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-1qr3lwd8/error.log"
