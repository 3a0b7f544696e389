worker_processes 2
listen "127.0.0.1:49975"
working_directory "/tmp/acceptlab-peer-unicorn-default-m_c73tyh"
pid "/tmp/acceptlab-peer-unicorn-default-m_c73tyh/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-m_c73tyh/error.log"
