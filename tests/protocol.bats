#!/usr/bin/env bats
# The protocol between the caller and the sandbox side, named once: records,
# marks and replies, in the same form on both sides.

load test_helper

@test "every record, mark and reply the program writes or reads is one its tables name, with their fields" {
  run python3 "$ROOT/tests/protocol_check.py" "$ROOT/cr-e2b"
  assert_success
  assert_output ""
}

@test "a field a table lacks is refused when it is written, and a reply is read by the table's names" {
  run env PYTHONPATH="$ROOT" python3 -c 'import cr_e2b
try:
    cr_e2b.protocol_line(cr_e2b.RECORDS, "spent", {"turn": 1, "event": "spent"}, {"dollars": 2})
except cr_e2b.ProtocolError as error:
    print(error)
print(cr_e2b.parse_reply("cancel", "noise\n{\"cancelled\": 3, \"ended\": true, \"extra\": 1}"))'
  assert_output "spent: ['dollars'] not in the protocol
{'dropped': None, 'cancelled': 3, 'ended': True}"
}
