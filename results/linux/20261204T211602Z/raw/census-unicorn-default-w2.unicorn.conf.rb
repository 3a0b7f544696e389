worker_processes 2
listen "127.0.0.1:41241"
working_directory "/tmp/acceptlab-peer-unicorn-default-kp0pw_eh"
pid "/tmp/acceptlab-peer-unicorn-default-kp0pw_eh/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-kp0pw_eh/error.log"
