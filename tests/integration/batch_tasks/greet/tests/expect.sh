expect_file() {
    if [ "$(cat "$1" 2>/dev/null)" = "$2" ]; then echo "PASS: $1 says $2"; else echo "FAIL: $1 does not say $2"; exit 1; fi
}
