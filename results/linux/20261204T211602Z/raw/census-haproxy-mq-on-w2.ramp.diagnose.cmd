/work/main/bin/acceptlab-diagnose --port 51711 --load ramp --connections 32 --rounds 3 --json
