/work/main/bin/acceptlab-diagnose --port 59927 --load burst --connections 32 --rounds 3 --json
