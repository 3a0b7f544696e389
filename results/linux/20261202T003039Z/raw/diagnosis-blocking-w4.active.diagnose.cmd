/work/main/bin/acceptlab-diagnose --port 33539 --load burst --connections 64 --request /pid --json  # with {'ACCEPTLAB_TEST_PROBE_WORKER_FROM': 'body'}
