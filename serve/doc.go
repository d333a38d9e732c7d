// Package serve is agcore's HTTP server as a library handler.
package serve
