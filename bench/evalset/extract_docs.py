"""Provenance: how docs.jsonl was cut from public repositories (run once by hand, not by the bench).

    python bench/evalset/extract_docs.py /work/.mirror > bench/evalset/docs.jsonl

Each source is a bare git mirror `<root>/<owner>+<name>/repo`; files are read at HEAD with
`git show`. Front matter, HTML comments, template tags and link targets are dropped; a body is cut
at a paragraph boundary after MAX_CHARS so long documents stay long (> 512 model tokens) without
being whole manuals. The licences are in LICENSES.md.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

MAX_CHARS = 6000

OPENSHIFT = """HighlyAvailableWorkloadIncorrectlySpread
advanced-cluster-management-operator/ACMRemoteWriteError advanced-cluster-management-operator/ACMThanosCompactHalted
advanced-cluster-management-operator/ACMMetricsCollectorFederationError
cluster-dns-operator/CoreDNSErrorsHigh cluster-image-registry-operator/ImageRegistryStorageFull
cluster-image-registry-operator/ImageRegistryStorageReadOnly cluster-kube-apiserver-operator/AuditLogError
cluster-kube-apiserver-operator/ExtremelyHighIndividualControlPlaneCPU
cluster-kube-controller-manager-operator/GarbageCollectorSyncFailed
cluster-kube-controller-manager-operator/PodDisruptionBudgetAtLimit
cluster-kube-descheduler-operator/DeschedulerPSIDisabled
cluster-logging-operator/ClusterLogForwarderNotReady cluster-logging-operator/CollectorHigh403ForbiddenResponseRate
cluster-logging-operator/CollectorNodeDown cluster-monitoring-operator/ClusterOperatorDegraded
cluster-monitoring-operator/TelemeterClientFailures cluster-network-operator/NoOvnClusterManagerLeader
cluster-network-operator/V4SubnetAllocationThresholdExceeded cluster-network-operator/NorthboundStaleAlert
cluster-openshift-apiserver-operator/ImageStreamImportFailed cluster-version-operator/ClusterVersionOperatorDown
machine-config-operator/MachineConfigControllerDrainError machine-config-operator/MachineConfigDaemonRebootError
machine-config-operator/SystemMemoryExceedsReservation machine-config-operator/RuncDeprecated
network-observability-operator/DNSNxDomain network-observability-operator/NetpolDenied
network-observability-operator/PacketDropsByKernel network-observability-operator/TLSInsecureVersion
openshift-container-storage-operator/CephClusterNearFull openshift-container-storage-operator/CephMonQuorumLost
openshift-container-storage-operator/CephOSDDown openshift-container-storage-operator/CephOSDSlowOps
openshift-container-storage-operator/CephMgrIsAbsent openshift-container-storage-operator/NooBaaSystemCapacityWarning85
openshift-container-storage-operator/ODFNodeMTULessThan9000 openshift-container-storage-operator/KMSServerConnectionAlert
openshift-container-storage-operator/ObcQuotaBytesAlert openshift-container-storage-operator/CephClusterReadOnly
openshift-virtualization-operator/CDINoDefaultStorageClass openshift-virtualization-operator/ClusterVMPanicDetected
openshift-virtualization-operator/GuestFilesystemAlmostOutOfSpace openshift-virtualization-operator/LowKVMNodesCount
openshift-virtualization-operator/VirtLauncherPodsStuckFailed openshift-virtualization-operator/VMCannotBeEvicted
openshift-virtualization-operator/HPPSharingPoolPathWithOS
openshift-virtualization-operator/DeprecatedMachineType openshift-virtualization-operator/SingleStackIPv6Unsupported
openshift-virtualization-operator/OrphanedVirtualMachineInstances openshift-virtualization-operator/HighNodeCPUFrequency"""

PROMETHEUS = """concepts/data_model concepts/jobs_instances concepts/metric_types guides/basic-auth guides/cadvisor
guides/file-sd guides/node-exporter guides/query-log guides/tls-encryption guides/utf8 instrumenting/pushing
introduction/faq introduction/glossary introduction/overview introduction/release-cycle operating/security
practices/alerting practices/histograms practices/instrumentation practices/naming practices/remote_write
practices/rules practices/the_zen tutorials/alerting_based_on_metrics visualization/grafana"""

ETCD = """faq learning/api_guarantees learning/data_model learning/design-learner learning/glossary
learning/persistent-storage-files learning/why op-guide/authentication/rbac op-guide/clustering
op-guide/configuration op-guide/container op-guide/data_corruption op-guide/failures op-guide/gateway
op-guide/grpc_proxy op-guide/hardware op-guide/maintenance op-guide/monitoring op-guide/performance
op-guide/recovery op-guide/runtime-configuration op-guide/security op-guide/versioning"""

ARGO = """architecture cluster-bootstrapping disaster_recovery dynamic-cluster-distribution git_configuration health
high_availability installation reconcile secret-management troubleshooting web_based_terminal webhook
signed-release-assets custom_tools deep_links"""

GOVUK_MANUAL = """alerts/elasticsearch-cluster-health alerts/email-alert-api-high-queue-latency
alerts/email-alert-api-unprocessed-work alerts/signon-api-user-token-expires-soon
alerts/check-status-gcp-mirror-sync-job alerts/data-gov-uk-high-traffic-alert amazonmq backups cdn
clear-the-redis-cache create-bastion-pod databases deployments dns emergency-publishing fall-back-to-mirror
fall-back-to-aws-cloudfront github-unavailable howto-backup-and-restore-in-aws-rds howto-setup-maintenance-mode
investigate-when-search-is-down load-test logging on-call pagerduty post-a-statuspage-message purge-cache
request-fastly-tls-certificate rotating-rds.credentials secrets-manager sentry sidekiq slack-unavailable
web_application_firewall_rules setup-a-yubikey rules-for-getting-production-access retiring-an-application"""

SOURCES = [
    # (mirror, prefix, licence, tags, paths)
    ("openshift+runbooks", "osr", "Apache-2.0", ["runbook", "openshift"],
     [f"alerts/{p}.md" for p in OPENSHIFT.split()]),
    ("prometheus+docs", "prom", "Apache-2.0", ["docs", "prometheus"],
     [f"docs/{p}.md" for p in PROMETHEUS.split()]),
    ("etcd-io+website", "etcd", "CC-BY-4.0", ["docs", "etcd"],
     [f"content/en/docs/v3.6/{p}.md" for p in ETCD.split()]),
    ("argoproj+argo-cd", "argo", "Apache-2.0", ["docs", "argocd"],
     [f"docs/operator-manual/{p}.md" for p in ARGO.split()]),
    ("alphagov+govuk-developer-docs", "govuk", "MIT", ["runbook", "govuk"],
     [f"source/manual/{p}.html.md" for p in GOVUK_MANUAL.split()]),
    ("alphagov+govuk-infrastructure", "govuk-adr", "MIT", ["adr", "govuk"], None),
]


def git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={mirror}", *args], check=True, capture_output=True,
                          text=True).stdout


def slug(text: str) -> str:
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1-\2", text)
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:80].strip("-")


def clean(raw: str) -> tuple[str | None, str]:
    """(front-matter title or None, body without front matter, comments, templates, link targets)."""
    title = None
    m = re.match(r"\A---\n(.*?)\n---\n", raw, re.S)
    if m:
        t = re.search(r"^(?:title|linkTitle):\s*(.+)$", m.group(1), re.M)
        if t:
            title = t.group(1).strip().strip("'\"")
        raw = raw[m.end():]
    raw = re.sub(r"<!--.*?-->", "", raw, flags=re.S)
    raw = re.sub(r"<%.*?%>", "", raw, flags=re.S)
    raw = re.sub(r"\{\{[<%].*?[>%]\}\}", "", raw, flags=re.S)
    raw = re.sub(r"^\[[^\]]+\]:\s*\S+.*$", "", raw, flags=re.M)        # reference-link targets
    raw = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", raw)                       # images
    raw = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", raw)                    # inline links: keep text
    raw = re.sub(r"\[([^\]]+)\]\[[^\]]*\]", r"\1", raw)                   # reference links: keep text
    raw = re.sub(r"\n{3,}", "\n\n", raw).strip()
    if title is None:
        h = re.match(r"\A#\s+(.+)\n", raw)
        if h:
            title = h.group(1).strip()
            raw = raw[h.end():].strip()
    return title, raw


def cut(body: str) -> str:
    if len(body) <= MAX_CHARS:
        return body
    end = body.rfind("\n\n", 0, MAX_CHARS)
    return body[: end if end > MAX_CHARS // 2 else MAX_CHARS].rstrip()


def main() -> None:
    root = Path(sys.argv[1])
    seen: set[str] = set()
    for mirror, prefix, licence, tags, paths in SOURCES:
        repo = root / mirror / "repo"
        commit = git(repo, "rev-parse", "HEAD").strip()
        if paths is None:  # every ADR but the template
            paths = [p for p in git(repo, "ls-tree", "-r", "--name-only", "HEAD",
                                    "docs/architecture/decisions").split()
                     if p.endswith(".md") and "TEMPLATE" not in p]
        for path in paths:
            title, body = clean(git(repo, "show", f"HEAD:{path}"))
            name = Path(path).name.split(".")[0]
            title = title or name
            title = re.sub(r"^\d+\.\s*", "", title) if prefix == "govuk-adr" else title
            key = f"{prefix}-{slug(re.sub(r'^[0-9-]+', '', name) if prefix == 'govuk-adr' else name)}"
            assert key not in seen, key
            seen.add(key)
            print(json.dumps({"key": key, "title": title, "body": cut(body), "tags": tags,
                              "source": f"github.com/{mirror.replace('+', '/')}@{commit[:12]}:{path}",
                              "licence": licence}, ensure_ascii=False))


if __name__ == "__main__":
    main()
