vcl 4.1;
backend default none;
sub vcl_recv { return (synth(200, "OK")); }
sub vcl_synth {
    set resp.http.Content-Type = "text/plain";
    set resp.body = "ok";
    return (deliver);
}
