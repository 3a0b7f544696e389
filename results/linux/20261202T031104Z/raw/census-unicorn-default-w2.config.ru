LOG = '/tmp/acceptlab-peer-unicorn-default-68p56jc7/access.log'
run ->(env) {
  sock = env["puma.socket"]
  port = sock ? sock.remote_address.ip_port : (env["REMOTE_PORT"] || "-")
  File.open(LOG, "a") { |f| f.write("#{$$} #{port} #{env["PATH_INFO"]}\n") }
  [200, {"Content-Type" => "text/plain", "Content-Length" => "2"}, ["ok"]]
}
