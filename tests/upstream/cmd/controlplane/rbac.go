package main

import (
	"context"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// rbacTimeout bounds the wait for new bindings to reach the authorizer's informers.
const rbacTimeout = 30 * time.Second

// grantScheduler gives user what kube-scheduler's own identity gets (the bootstrap
// system:kube-scheduler and system:volume-scheduler ClusterRoles) plus leader election on the
// lease named leaseName in kube-system, and waits until the authorizer allows it.
func grantScheduler(ctx context.Context, admin kubernetes.Interface, user, leaseName string) error {
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	for _, role := range []string{"system:kube-scheduler", "system:volume-scheduler"} {
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user + ":" + role},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   subject,
		}
		if err := create(ctx, func(ctx context.Context) error {
			_, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("ClusterRoleBinding %s: %w", binding.Name, err)
		}
	}

	name := user + ":leader-election"
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceSystem},
		Rules: []rbacv1.PolicyRule{
			{
				APIGroups:     []string{coordinationv1.GroupName},
				Resources:     []string{"leases"},
				ResourceNames: []string{leaseName},
				Verbs:         []string{"get", "update", "patch"},
			},
			{
				// create cannot be limited by name: the name is in the body, not the URL.
				APIGroups: []string{coordinationv1.GroupName},
				Resources: []string{"leases"},
				Verbs:     []string{"create"},
			},
		},
	}
	if err := create(ctx, func(ctx context.Context) error {
		_, err := admin.RbacV1().Roles(metav1.NamespaceSystem).Create(ctx, role, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("Role %s: %w", name, err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceSystem},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   subject,
	}
	if err := create(ctx, func(ctx context.Context) error {
		_, err := admin.RbacV1().RoleBindings(metav1.NamespaceSystem).Create(ctx, binding, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("RoleBinding %s: %w", name, err)
	}

	// One check per granted piece: each comes from a different binding.
	checks := []authorizationv1.ResourceAttributes{
		{Verb: "create", Resource: "pods", Subresource: "binding"},
		{Verb: "patch", Resource: "pods", Subresource: "status"},
		{Verb: "list", Resource: "persistentvolumes"},
		{Verb: "update", Group: coordinationv1.GroupName, Resource: "leases",
			Namespace: metav1.NamespaceSystem, Name: leaseName},
	}
	return waitAllowed(ctx, admin, user, checks)
}

// create runs a create call, taking "already exists" (a retried request) as success.
func create(ctx context.Context, call func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, rbacTimeout)
	defer cancel()
	if err := call(ctx); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// waitAllowed asks the authorizer (SubjectAccessReview) until it allows user every check:
// RBAC reads bindings through informers, so a fresh binding takes a moment to count.
func waitAllowed(ctx context.Context, admin kubernetes.Interface, user string, checks []authorizationv1.ResourceAttributes) error {
	ctx, cancel := context.WithTimeout(ctx, rbacTimeout)
	defer cancel()
	for _, check := range checks {
		for {
			review := &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &check},
			}
			got, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			if err == nil && got.Status.Allowed {
				break
			}
			select {
			case <-ctx.Done():
				if err == nil {
					err = fmt.Errorf("denied: %s", got.Status.Reason)
				}
				return fmt.Errorf("%s %s/%s %s not allowed within %v: %w",
					check.Verb, check.Resource, check.Subresource, check.Name, rbacTimeout, err)
			case <-time.After(pollInterval):
			}
		}
	}
	return nil
}
