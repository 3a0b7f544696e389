import socket
import uwsgi


def application(environ, start_response):
    s = socket.fromfd(uwsgi.connection_fd(), socket.AF_INET, socket.SOCK_STREAM)
    uwsgi.set_logvar("port", str(s.getpeername()[1]))
    s.close()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "3")])
    return [b"ok\n"]
