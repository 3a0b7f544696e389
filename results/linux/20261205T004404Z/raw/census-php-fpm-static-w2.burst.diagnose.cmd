/work/main/bin/acceptlab-diagnose --port 45269 --load burst --connections 32 --rounds 3 --tcp --json
