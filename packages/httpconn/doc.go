// Package httpconn is a lean HTTP/1.1 client connection for load that runs beside the stack it
// measures. It imports only the standard library, so any package may use it.
package httpconn
