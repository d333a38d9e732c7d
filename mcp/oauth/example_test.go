package oauth_test

import (
	"fmt"
	"log"
	"os"

	"github.com/agcore/agcore/mcp/oauth"
)

// A login's grant is kept per server and principal; a later process loads
// it, and the Handler sends and refreshes its token (see NewHandler).
func ExampleStore() {
	dir, err := os.MkdirTemp("", "tokens")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store := &oauth.Store{Dir: dir}
	if err := store.Save(&oauth.Grant{Server: "https://mcp.example.com/mcp/", Principal: "alice", AccessToken: "a", TokenURL: "https://auth.example.com/token"}); err != nil {
		log.Fatal(err)
	}
	g, err := store.Load("https://MCP.example.com/mcp", "alice")
	fmt.Println(g, err)
	_, err = store.Load("https://mcp.example.com/mcp", "bob")
	fmt.Println(err)
	// Output:
	// grant for https://mcp.example.com/mcp (principal "alice") <nil>
	// no stored login
}
