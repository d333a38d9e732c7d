// Package a2aserve serves agcore agents over the Agent2Agent (A2A) protocol.
package a2aserve
