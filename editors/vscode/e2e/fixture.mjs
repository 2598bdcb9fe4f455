// The workspace the end-to-end test opens: a few small files in four
// languages, with one clear answer for each query the scenario types.

export const FILES = {
  "uploads.py": `"""Upload files to the storage service."""

import random
import time


class UploadRetryPolicy:
    """How often and how long to wait before sending a failed upload again."""

    def __init__(self, attempts: int = 5, base_delay: float = 0.5) -> None:
        self.attempts = attempts
        self.base_delay = base_delay

    def should_retry(self, attempt: int, status: int) -> bool:
        return attempt < self.attempts and status >= 500

    def backoff(self, attempt: int) -> float:
        return self.base_delay * (2 ** attempt) + random.random()


def upload_with_retries(client, path, policy: UploadRetryPolicy):
    attempt = 0
    while True:
        status = client.put(path)
        if status < 400 or not policy.should_retry(attempt, status):
            return status
        time.sleep(policy.backoff(attempt))
        attempt += 1
`,
  "geometry.py": `import math


def circle_area(radius: float) -> float:
    return math.pi * radius * radius


def distance(a: tuple[float, float], b: tuple[float, float]) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])
`,
  "web/headers.js": `// Turn a raw header block into a map of lower-cased names to values.
export function parseHttpHeader(raw) {
  const headers = new Map();
  for (const line of raw.split("\\r\\n")) {
    const idx = line.indexOf(":");
    if (idx > 0) headers.set(line.slice(0, idx).trim().toLowerCase(), line.slice(idx + 1).trim());
  }
  return headers;
}

export class CookieJar {
  constructor() { this.cookies = []; }
  add(cookie) { this.cookies.push(cookie); }
}
`,
  "server/db.go": `package server

import "database/sql"

// OpenDatabase connects to the SQL database and checks the connection.
func OpenDatabase(dsn string) (*sql.DB, error) {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return nil, err
	}
	return db, db.Ping()
}
`,
};
