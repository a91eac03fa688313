#!/usr/bin/env bash
# The sharded mutation run on a Kubernetes cluster (issue 37; docs/scenarios.md "Mutation testing", "Sharded"):
# an Indexed Job of N shards in the testbed image (test/mutation/k8s/job.yaml), each index a slice of the mutated
# files; the reports leave through `kubectl logs`, are merged into one (out/mutation/k8s/merged: index.html,
# mutation.json, summary.md) and, with --compare, checked mutant by mutant against a one-machine run's report.
#
#   test/mutation/k8s/run.sh --image IMAGE [--shards N] [--parallelism P] [--concurrency C] [--namespace NS]
#                            [--kind-load CLUSTER] [--deadline S] [--compare out/mutation/mutation.json] [--keep]
#
# --kind-load CLUSTER: `kind load docker-image IMAGE --name CLUSTER` first (kind has no registry to pull from).
# KUBECONFIG / KUBECTL / KIND as usual. Needs node and the repository (for collect/merge) on the machine running it.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
image="" shards=4 parallelism="" concurrency=1 namespace=default kind_load="" deadline=21600 compare="" keep=0 job=hcs-mutation
while [ $# -gt 0 ]; do
  case "$1" in
    --image) image="$2"; shift 2 ;;
    --shards) shards="$2"; shift 2 ;;
    --parallelism) parallelism="$2"; shift 2 ;;
    --concurrency) concurrency="$2"; shift 2 ;;
    --namespace) namespace="$2"; shift 2 ;;
    --kind-load) kind_load="$2"; shift 2 ;;
    --deadline) deadline="$2"; shift 2 ;;
    --compare) compare="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "k8s/run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$image" ] || { echo "k8s/run.sh: --image IMAGE is required (the testbed image: the project's Dockerfile, e.g. tools/kind/images.sh's hcs-testbed/provider:<tree>)" >&2; exit 2; }
parallelism="${parallelism:-$shards}"
kubectl="${KUBECTL:-kubectl}"
out="$root/out/mutation/k8s"
rm -rf "$out" && mkdir -p "$out/logs"
if [ -n "$kind_load" ]; then
  echo "== kind load docker-image $image --name $kind_load"
  "${KIND:-kind}" load docker-image "$image" --name "$kind_load"
fi
"$kubectl" -n "$namespace" delete job "$job" --ignore-not-found --wait=true >/dev/null
sed -e "s|\${JOB}|$job|g" -e "s|\${SHARDS}|$shards|g" -e "s|\${PARALLELISM}|$parallelism|g" -e "s|\${CONCURRENCY}|$concurrency|g" \
    -e "s|\${IMAGE}|$image|g" -e "s|\${DEADLINE}|$deadline|g" "$root/test/mutation/k8s/job.yaml" > "$out/job.yaml"
t0=$SECONDS
"$kubectl" -n "$namespace" apply -f "$out/job.yaml"
echo "== $job: $shards shards, $parallelism at once, $concurrency test runner(s) each; waiting (deadline ${deadline} s)"
while :; do
  status="$("$kubectl" -n "$namespace" get job "$job" -o jsonpath='{.status.succeeded}/{.status.failed}/{.status.conditions[?(@.status=="True")].type}')"
  case "$status" in
    */*/*Complete*) break ;;
    */*/*Failed*) echo "k8s/run.sh: the Job failed: $status" >&2; "$kubectl" -n "$namespace" get pods -l job-name="$job" -o wide >&2; exit 1 ;;
  esac
  if [ $((SECONDS - t0)) -gt $((deadline + 120)) ]; then echo "k8s/run.sh: gave up waiting after $((SECONDS - t0)) s" >&2; exit 1; fi
  sleep 15
done
wall=$((SECONDS - t0))
start="$("$kubectl" -n "$namespace" get job "$job" -o jsonpath='{.status.startTime}')"
done_at="$("$kubectl" -n "$namespace" get job "$job" -o jsonpath='{.status.completionTime}')"
echo "== $job complete: ${wall} s here (Job start $start, completion $done_at)"
logs=()
for ((i = 0; i < shards; i++)); do
  pod="$("$kubectl" -n "$namespace" get pods -l "job-name=$job,batch.kubernetes.io/job-completion-index=$i" --field-selector=status.phase=Succeeded -o name | head -n 1)"
  [ -n "$pod" ] || { echo "k8s/run.sh: no succeeded pod for index $i" >&2; exit 1; }
  "$kubectl" -n "$namespace" logs "$pod" > "$out/logs/shard-$i.log"
  logs+=("$out/logs/shard-$i.log")
  grep -E "^shard $i: [0-9]+ mutants" "$out/logs/shard-$i.log" | sed 's/^/   /' || true
done
cd "$root"
mapfile -t dirs < <(node --import tsx test/mutation/cli.ts collect "${logs[@]}" --out "$out/shards")
node --import tsx test/mutation/cli.ts merge "${dirs[@]}" --out "$out/merged"
echo "{\"shards\": $shards, \"parallelism\": $parallelism, \"wallS\": $wall, \"jobStart\": \"$start\", \"jobCompletion\": \"$done_at\"}" > "$out/run.json"
rc=0
if [ -n "$compare" ]; then
  echo "== verdicts against $compare"
  node --import tsx test/mutation/cli.ts compare "$compare" "$out/merged/mutation.json" || rc=$?
fi
[ "$keep" = 1 ] || "$kubectl" -n "$namespace" delete job "$job" --wait=false >/dev/null
exit $rc
