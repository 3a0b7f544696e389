LOG = '/tmp/acceptlab-peer-unicorn-default-g657xis0/access.log'
run ->(env) {
  sock = env["puma.socket"]
  # The client port and the socket's object id (never reused): a port
  # alone may come back on a later connection.
  port = sock ? "#{sock.remote_address.ip_port}.#{sock.object_id}" : (env["REMOTE_PORT"] || "-")
  File.open(LOG, "a") { |f| f.write("#{$$} #{port} #{env["PATH_INFO"]}\n") }
  [200, {"Content-Type" => "text/plain", "Content-Length" => "2"}, ["ok"]]
}
