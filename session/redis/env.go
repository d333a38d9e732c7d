package redis

import "os"

// envPassword is REDIS_PASSWORD, the password used when the URL has none.
func envPassword() string { return os.Getenv("REDIS_PASSWORD") }
