// What the launcher seeds into moto: public EKS/Bottlerocket/Windows SSM parameters and the AMIs they
// point at. Tests import the same constants, so an expectation names the image it means.

export const SEED_K8S_VERSION = '1.31';
/** The older release that pinned aliases (al2023@v20240807) select. */
export const PINNED_RELEASE = 'v20240807';
/** The release `recommended`/`latest` points at. */
export const LATEST_RELEASE = 'v20240917';
export const BOTTLEROCKET_PINNED = '1.20.4';
export const BOTTLEROCKET_LATEST = '1.22.0';
/** Account that publishes the EKS optimized AMIs. */
export const EKS_AMI_OWNER = '602401143452';

export interface SeedImage {
  ami_id: string;
  name: string;
  architecture: 'x86_64' | 'arm64';
  creation_date: string;
  state: 'available';
  public: true;
  owner_id: string;
  image_location: string;
  root_device_type: 'ebs';
  root_device_name: string;
  virtualization_type: 'hvm';
  hypervisor: 'xen';
  description: string;
  platform?: string;
}

export interface Seed {
  parameters: Record<string, string>;
  images: SeedImage[];
}

const images: SeedImage[] = [];
const parameters: Record<string, string> = {};
const idsByName = new Map<string, string>();

function image(name: string, arch: 'x86_64' | 'arm64', created: string, platform?: string): string {
  const existing = idsByName.get(name);
  if (existing) return existing;
  const id = `ami-0e${String(images.length + 1).padStart(15, '0')}`;
  images.push({
    ami_id: id,
    name,
    architecture: arch,
    creation_date: created,
    state: 'available',
    public: true,
    owner_id: EKS_AMI_OWNER,
    image_location: `amazon/${name}`,
    root_device_type: 'ebs',
    root_device_name: platform === 'windows' ? '/dev/sda1' : '/dev/xvda',
    virtualization_type: 'hvm',
    hypervisor: 'xen',
    description: `karpless test image ${name}`,
    ...(platform ? { platform } : {}),
  });
  idsByName.set(name, id);
  return id;
}

const OLD_DATE = '2024-08-07T00:00:00.000Z';
const NEW_DATE = '2024-09-17T00:00:00.000Z';
const k8s = SEED_K8S_VERSION;
const eks = `/aws/service/eks/optimized-ami/${k8s}`;

// AL2023: one AMI per arch × variant, a recommended and a pinned release.
for (const [arch, variants] of [
  ['x86_64', ['standard', 'nvidia', 'neuron']],
  ['arm64', ['standard', 'nvidia']],
] as const) {
  for (const variant of variants) {
    const base = `amazon-eks-node-al2023-${arch}-${variant}-${k8s}`;
    parameters[`${eks}/amazon-linux-2023/${arch}/${variant}/recommended/image_id`] = image(
      `${base}-${LATEST_RELEASE}`,
      arch,
      NEW_DATE,
    );
    parameters[`${eks}/amazon-linux-2023/${arch}/${variant}/${base}-${PINNED_RELEASE}/image_id`] = image(
      `${base}-${PINNED_RELEASE}`,
      arch,
      OLD_DATE,
    );
  }
}

// AL2: standard x86, arm64 and the shared GPU image.
for (const [suffix, prefix, arch] of [
  ['', 'amazon-eks-node', 'x86_64'],
  ['-arm64', 'amazon-eks-arm64-node', 'arm64'],
  ['-gpu', 'amazon-eks-gpu-node', 'x86_64'],
] as const) {
  const path = `${eks}/amazon-linux-2${suffix}`;
  parameters[`${path}/recommended/image_id`] = image(`${prefix}-${k8s}-${LATEST_RELEASE}`, arch, NEW_DATE);
  const pinned = `${prefix}-${k8s}-${PINNED_RELEASE}`;
  parameters[`${path}/${pinned}/image_id`] = image(pinned, arch, OLD_DATE);
}

// Bottlerocket: standard per arch and the nvidia flavour, latest and pinned.
for (const flavour of ['', '-nvidia'] as const) {
  for (const arch of ['x86_64', 'arm64'] as const) {
    for (const [leaf, version, date] of [
      ['latest', BOTTLEROCKET_LATEST, NEW_DATE],
      [BOTTLEROCKET_PINNED, BOTTLEROCKET_PINNED, OLD_DATE],
    ] as const) {
      parameters[`/aws/service/bottlerocket/aws-k8s-${k8s}${flavour}/${arch}/${leaf}/image_id`] = image(
        `bottlerocket-aws-k8s-${k8s}${flavour}-${arch}-v${version}-abcdef01`,
        arch,
        date,
      );
    }
  }
}

// Windows: only `latest` exists upstream.
for (const year of ['2019', '2022']) {
  parameters[`/aws/service/ami-windows-latest/Windows_Server-${year}-English-Core-EKS_Optimized-${k8s}/image_id`] =
    image(`Windows_Server-${year}-English-Core-EKS_Optimized-${k8s}-2024.09.17`, 'x86_64', NEW_DATE, 'windows');
}

export const SEED: Seed = { parameters, images };

/** The seeded AMI id of an image name; throws so a typo in a test fails loudly. */
export function seedImageId(name: string): string {
  const id = idsByName.get(name);
  if (!id) throw new Error(`no seeded image named ${name}`);
  return id;
}

export function seedImageName(id: string): string {
  const found = images.find((i) => i.ami_id === id);
  if (!found) throw new Error(`no seeded image ${id}`);
  return found.name;
}
