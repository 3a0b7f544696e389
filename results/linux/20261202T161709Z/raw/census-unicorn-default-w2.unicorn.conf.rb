worker_processes 2
listen "127.0.0.1:51535"
working_directory "/tmp/acceptlab-peer-unicorn-default-s3gpxyb4"
pid "/tmp/acceptlab-peer-unicorn-default-s3gpxyb4/unicorn.pid"
stderr_path "/tmp/acceptlab-peer-unicorn-default-s3gpxyb4/error.log"
