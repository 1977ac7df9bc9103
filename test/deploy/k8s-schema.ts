import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import type { K8sObject } from './k8s-manifests';

/**
 * Checks a manifest object against the OpenAPI schema of its kind, as the API server would:
 * the schemas of Kubernetes itself (kubernetes-models, ajv) and of the two add-ons the optional
 * manifests use (KEDA, the Prometheus Operator).
 */

/** Every kind the manifests may hold, by `apiVersion/kind`; anything else is an error. */
const MODELS: Record<string, { prototype: { validate(): void } }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor,
};

/**
 * The schema's complaints about `object`, plus every field the schema does not define. The
 * Kubernetes schemas allow unknown fields (kubeconform's non-strict mode); the API server
 * refuses them, and a typo such as `livenesProbe` would otherwise pass as a probe-less pod.
 * Unknown fields are found by watching the schema's validator: it reads each field it defines,
 * and enumerates free-form maps (labels, ConfigMap data) whole, so a field it never read is one
 * it does not know.
 */
export function schemaProblems(object: K8sObject): string[] {
  const model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (!model) return [`${object.apiVersion} ${object.kind}: not a kind these manifests may use`];
  const read = new Map<object, Set<PropertyKey>>();
  const proxies = new Map<object, object>();
  const watch = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    let proxy = proxies.get(value);
    if (!proxy) {
      const keys = new Set<PropertyKey>();
      read.set(value, keys);
      proxy = new Proxy(value, {
        get(target, key, receiver) {
          keys.add(key);
          return watch(Reflect.get(target, key, receiver));
        },
        ownKeys(target) {
          for (const key of Reflect.ownKeys(target)) keys.add(key);
          return Reflect.ownKeys(target);
        },
      });
      proxies.set(value, proxy);
    }
    return proxy;
  };

  const problems: string[] = [];
  try {
    model.prototype.validate.call(watch(object));
  } catch (error) {
    problems.push((error as Error).message);
  }
  const unread = (value: unknown, at: string) => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => unread(item, `${at}[${index}]`));
    } else if (typeof value === 'object' && value !== null) {
      const keys = read.get(value);
      for (const [key, item] of Object.entries(value)) {
        if (!keys?.has(key)) problems.push(`${at}.${key}: not a field of ${object.kind}`);
        else unread(item, `${at}.${key}`);
      }
    }
  };
  unread(object, object.kind);
  return problems;
}
