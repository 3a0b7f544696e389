worker_processes 2
listen "127.0.0.1:53465"
working_directory "/tmp/acceptlab-peer-unicorn-default-pci0osjf"
pid "/tmp/acceptlab-peer-unicorn-default-pci0osjf/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-pci0osjf/error.log"
