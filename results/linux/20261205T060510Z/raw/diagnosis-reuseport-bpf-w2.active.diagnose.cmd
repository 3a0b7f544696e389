/work/main/bin/acceptlab-diagnose --port 39735 --load burst --connections 32 --request /pid --json  # with {'ACCEPTLAB_TEST_PROBE_WORKER_FROM': 'body'}
