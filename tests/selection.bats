#!/usr/bin/env bats
# Which workers a verb takes: --sandbox or ids as words, --all, --everyone,
# --profile, and the owner a worker is started with.

load test_helper

@test "a selection of workers is --sandbox or --all, checked before any call; brief takes one" {
  run --separate-stderr cr-e2b wait --sandbox sbx1 --all
  assert_failure 2
  assert_one_error_line
  assert_output_contains "give the sandboxes' ids (ID ..., or --sandbox ID each) or --all"
  run --separate-stderr cr-e2b kill --profile docs --sandbox sbx1
  assert_failure 2
  assert_one_error_line
  assert_output_contains "--profile goes with --all"
  run --separate-stderr cr-e2b brief --sandbox sbx1 --sandbox sbx2 --brief brief.md
  assert_failure 2
  assert_one_error_line
  assert_output_contains "cr-e2b: --sandbox is given once: this verb acts on one worker"
  no_sdk_calls
}

@test "a verb takes its sandbox's id as a word, as gh and kubectl do, and --sandbox beside it must agree" {
  make_sandbox
  run cr-e2b status sbx1
  assert_success
  [[ "${lines[0]}" == "sandbox   sbx1 (running, "* ]]
  run cr-e2b status sbx1 --sandbox sbx1
  assert_success
  run cr-e2b log sbx1 --tail 5
  assert_success
  rm "$FAKE_E2B_DIR/calls.jsonl"
  for verb in "brief --brief brief.md" log status cancel budget diff "extend --timeout 60" pause resume fork; do
    # shellcheck disable=SC2086 # a verb and its options
    run --separate-stderr cr-e2b $verb sbx1 --sandbox sbx2
    assert_failure 2
    assert_one_error_line
    assert_output_contains "two sandboxes named, sbx1 and --sandbox sbx2: cr-e2b ${verb%% *} acts on one"
    # shellcheck disable=SC2086
    run --separate-stderr cr-e2b $verb
    assert_failure 2
    assert_one_error_line
    assert_output_contains "name the sandbox: cr-e2b ${verb%% *} ID, or --sandbox ID"
    run cr-e2b "${verb%% *}" --help
    assert_output_contains "  \$ cr-e2b ${verb%% *} ID"
  done
  no_sdk_calls
}

@test "kill and wait take several ids as words, beside --sandbox" {
  make_sandbox
  python3 -c 'import e2b; e2b.Sandbox.create(timeout=3600, metadata={"cr-e2b": "1", "profile": "docs"})'
  run cr-e2b kill sbx1 --sandbox sbx2 --force
  assert_success
  [ "$(sandbox_state sbx1)" = killed ]
  [ "$(sandbox_state sbx2)" = killed ]
  run --separate-stderr cr-e2b wait sbx1 --all
  assert_failure 2
  assert_one_error_line
  assert_output_contains "or --all"
  run cr-e2b wait --help
  assert_output_contains "  \$ cr-e2b wait ID1 ID2 --json"
}

@test "wait --all that matches no worker says so and exits 3, never a green" {
  fleet_worker docs 0 false "WORKER docs READY"
  run --separate-stderr cr-e2b wait --all --profile nope --json
  assert_failure 3
  run python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["outcome"], d["exit_code"], d["workers"])' "$output"
  assert_output "gone 3 []"
  run --separate-stderr cr-e2b wait --all --profile nope
  assert_failure 3
  assert_one_error_line
  [ "$stderr" = "cr-e2b: no worker matches --all --profile nope: nothing to wait for" ]
}

@test "kill --all that matches no worker warns that it killed nothing, and succeeds" {
  fleet_worker docs 0 false "WORKER docs READY"
  run --separate-stderr cr-e2b kill --all --profile nope
  assert_success
  assert_output ""
  [ "$stderr" = "cr-e2b: warning: no worker matches --all --profile nope: nothing to kill" ]
  [ "$(sandbox_state sbx1)" = running ]
}

@test "--all is the caller's own workers, --everyone widens it, list --mine keeps them, and list names a colleague's owner" {
  for owner in test@example.com colleague@example.com; do
    python3 -c 'import sys, e2b; e2b.Sandbox.create(timeout=3600, metadata={"cr-e2b": "1", "profile": "backend",
      "repo": "https://h/app.git", "session": "s", "owner": sys.argv[1]})' "$owner"
  done
  fleet_worker old 0 false "WORKER old READY"  # from before owners were recorded
  install_runner sbx1; install_runner sbx2
  run cr-e2b list
  assert_output_contains "sbx2  backend"
  assert_output_contains "(owner colleague@example.com)"
  [ "$(grep -c '(owner ' <<<"$output")" -eq 1 ]
  run cr-e2b list --mine
  refute_output_contains "sbx2"
  assert_output_contains "sbx1  backend"
  assert_output_contains "sbx3  "
  run cr-e2b kill --all --profile backend --force
  assert_success
  [ "$(sandbox_state sbx1)" = killed ]
  [ "$(sandbox_state sbx2)" = running ]
  run --separate-stderr cr-e2b kill --sandbox sbx2 --everyone --force
  assert_failure 2
  assert_output ""
  CR_E2B_OWNER=colleague@example.com run cr-e2b list
  refute_output_contains "(owner "  # the colleague's own, and one with no owner recorded
  run cr-e2b kill --all --everyone --force
  assert_success
  [ "$(sandbox_state sbx2)" = killed ]
  [ "$(sandbox_state sbx3)" = killed ]
}

@test "in GitHub Actions the owner is the workflow run: a job's --all is its own run's, --everyone reaches all" {
  export GITHUB_ACTIONS=true GITHUB_REPOSITORY=acme/demo GITHUB_RUN_ID=11
  run --separate-stderr cr-e2b start "${ok_args[@]}" --check true --dry-run --json
  run python3 -c 'import json,sys; print(json.loads(sys.argv[1])["metadata"]["owner"])' "$output"
  assert_output acme/demo/actions/runs/11
  FLEET_OWNER=acme/demo/actions/runs/11 fleet_worker backend 0 false "EPIC wc-2 BLOCKED needs the staging key"
  FLEET_OWNER=acme/demo/actions/runs/12 fleet_worker backend 0 false "WORKER b READY"
  export GITHUB_RUN_ID=12
  run --separate-stderr cr-e2b wait --all --profile backend
  assert_success  # run 11's BLOCKED worker is not run 12's
  run cr-e2b kill --all --profile backend --force
  assert_success
  [ "$(sandbox_state sbx1)" = running ]
  [ "$(sandbox_state sbx2)" = killed ]
  CR_E2B_OWNER=acme/demo/actions/runs/11 run --separate-stderr cr-e2b wait --all
  assert_failure 5
  run cr-e2b kill --all --everyone --force
  assert_success
  [ "$(sandbox_state sbx1)" = killed ]
}

@test "start records who started the worker: CR_E2B_OWNER, else the git email" {
  run --separate-stderr cr-e2b start "${ok_args[@]}" --check true --dry-run --json
  run python3 -c 'import json,sys; print(json.loads(sys.argv[1])["metadata"]["owner"])' "$output"
  assert_output test@example.com
  CR_E2B_OWNER=ci-night run --separate-stderr cr-e2b start "${ok_args[@]}" --check true --dry-run --json
  run python3 -c 'import json,sys; print(json.loads(sys.argv[1])["metadata"]["owner"])' "$output"
  assert_output ci-night
}
