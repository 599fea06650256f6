package devsim

func init() {
	for _, n := range []string{"cisco_iosxr", "juniper_junos"} {
		v := *vendors["cisco_ios"]
		v.name = n
		vendors[n] = &v
	}
}
