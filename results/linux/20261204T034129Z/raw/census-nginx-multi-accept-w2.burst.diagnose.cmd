/work/main/bin/acceptlab-diagnose --port 53917 --load burst --connections 32 --rounds 3 --json
