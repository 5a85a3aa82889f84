{
  "targets": [
    {
      "target_name": "idle_memory",
      "sources": ["src/idle_memory.cc"]
    }
  ]
}
